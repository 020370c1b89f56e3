CREATE TABLE `pending_deletions` (
	`id` text PRIMARY KEY NOT NULL,
	`table_id` text NOT NULL,
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
CREATE UNIQUE INDEX `pending_deletions_live_path_idx` ON `pending_deletions` (`table_id`,`path`) WHERE "pending_deletions"."status" in ('PENDING_DELETE', 'RECOVERING', 'DELETING');--> statement-breakpoint
CREATE INDEX `pending_deletions_recovered_path_idx` ON `pending_deletions` (`table_id`,`path`) WHERE "pending_deletions"."status" = 'RECOVERED';--> statement-breakpoint
CREATE INDEX `pending_deletions_due_idx` ON `pending_deletions` (`status`,`eligible_at`);--> statement-breakpoint
CREATE INDEX `pending_deletions_table_due_idx` ON `pending_deletions` (`table_id`,`status`,`eligible_at`);--> statement-breakpoint
CREATE INDEX `pending_deletions_created_idx` ON `pending_deletions` (`created_at`);--> statement-breakpoint
CREATE INDEX `pending_deletions_status_created_idx` ON `pending_deletions` (`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `pending_deletions_table_created_idx` ON `pending_deletions` (`table_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `pending_deletions_source_idx` ON `pending_deletions` (`source_job_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `pending_deletions_hard_delete_idx` ON `pending_deletions` (`hard_delete_job_id`);