CREATE TABLE `prefix_runs` (
	`job_id` text PRIMARY KEY NOT NULL,
	`prefix_id` text NOT NULL,
	`action` text NOT NULL,
	`trigger` text NOT NULL,
	`policy_version` integer,
	`requested_by` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `prefix_runs_prefix_idx` ON `prefix_runs` (`prefix_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `prefix_runs_trigger_idx` ON `prefix_runs` (`prefix_id`,`trigger`,`created_at`);--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_pending_deletions` (
	`id` text PRIMARY KEY NOT NULL,
	`table_id` text,
	`prefix_id` text,
	`source_job_id` text NOT NULL,
	`action_type` text NOT NULL,
	`vacuum_mode` text,
	`reason` text NOT NULL,
	`path` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`partition` text,
	`file` text,
	`status` text DEFAULT 'PENDING_DELETE' NOT NULL,
	`eligible_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`recovered_at` integer,
	`recover_reason` text,
	`recovered_by` text,
	`recover_job_id` text,
	`hard_delete_job_id` text,
	`deleted_at` integer,
	`note` text
);
--> statement-breakpoint
INSERT INTO `__new_pending_deletions`("id", "table_id", "prefix_id", "source_job_id", "action_type", "vacuum_mode", "reason", "path", "size_bytes", "partition", "file", "status", "eligible_at", "created_at", "updated_at", "recovered_at", "recover_reason", "recovered_by", "recover_job_id", "hard_delete_job_id", "deleted_at", "note") SELECT "id", "table_id", NULL, "source_job_id", "action_type", "vacuum_mode", "reason", "path", "size_bytes", "partition", "file", "status", "eligible_at", "created_at", "updated_at", "recovered_at", "recover_reason", "recovered_by", "recover_job_id", "hard_delete_job_id", "deleted_at", "note" FROM `pending_deletions`;--> statement-breakpoint
DROP TABLE `pending_deletions`;--> statement-breakpoint
ALTER TABLE `__new_pending_deletions` RENAME TO `pending_deletions`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `pending_deletions_live_path_idx` ON `pending_deletions` (`table_id`,`path`) WHERE "pending_deletions"."status" in ('PENDING_DELETE', 'RECOVERING', 'DELETING');--> statement-breakpoint
CREATE INDEX `pending_deletions_recovered_path_idx` ON `pending_deletions` (`table_id`,`path`) WHERE "pending_deletions"."status" = 'RECOVERED';--> statement-breakpoint
CREATE UNIQUE INDEX `pending_deletions_prefix_live_path_idx` ON `pending_deletions` (`prefix_id`,`path`) WHERE "pending_deletions"."prefix_id" is not null and "pending_deletions"."status" in ('PENDING_DELETE', 'RECOVERING', 'DELETING');--> statement-breakpoint
CREATE INDEX `pending_deletions_prefix_created_idx` ON `pending_deletions` (`prefix_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `pending_deletions_due_idx` ON `pending_deletions` (`status`,`eligible_at`);--> statement-breakpoint
CREATE INDEX `pending_deletions_table_due_idx` ON `pending_deletions` (`table_id`,`status`,`eligible_at`);--> statement-breakpoint
CREATE INDEX `pending_deletions_created_idx` ON `pending_deletions` (`created_at`);--> statement-breakpoint
CREATE INDEX `pending_deletions_status_created_idx` ON `pending_deletions` (`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `pending_deletions_table_created_idx` ON `pending_deletions` (`table_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `pending_deletions_source_idx` ON `pending_deletions` (`source_job_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `pending_deletions_hard_delete_idx` ON `pending_deletions` (`hard_delete_job_id`);--> statement-breakpoint
ALTER TABLE `prefix_policies` ADD `next_run_at` integer;--> statement-breakpoint
CREATE INDEX `prefix_policies_due_idx` ON `prefix_policies` (`next_run_at`) WHERE "prefix_policies"."active" = 1;