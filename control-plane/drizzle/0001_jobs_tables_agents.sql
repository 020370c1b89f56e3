CREATE TABLE `agents` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`token_hash` text NOT NULL,
	`token_prefix` text NOT NULL,
	`created_by` text,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	`revoked_at` integer,
	`version` text,
	`kinds` text DEFAULT '[]' NOT NULL,
	`capabilities` text DEFAULT '[]' NOT NULL,
	`capacity` integer DEFAULT 0 NOT NULL,
	`status` text DEFAULT 'disconnected' NOT NULL,
	`connected_at` integer,
	`last_seen_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `agents_token_hash_unique` ON `agents` (`token_hash`);--> statement-breakpoint
CREATE TABLE `inventory_history` (
	`id` text PRIMARY KEY NOT NULL,
	`table_id` text NOT NULL,
	`table_name` text NOT NULL,
	`previous_uri` text,
	`inventory_report_uri` text,
	`changed_by` text,
	`changed_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `inventory_history_table_idx` ON `inventory_history` (`table_id`,`changed_at`);--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`table_id` text,
	`priority` text DEFAULT 'P2' NOT NULL,
	`payload` text NOT NULL,
	`requires` text NOT NULL,
	`status` text DEFAULT 'queued' NOT NULL,
	`attempt` integer DEFAULT 0 NOT NULL,
	`max_attempts` integer DEFAULT 3 NOT NULL,
	`fence` integer DEFAULT 0 NOT NULL,
	`lease_owner` text,
	`lease_expires_at` integer,
	`not_before` integer NOT NULL,
	`dedupe_key` text,
	`trigger` text DEFAULT 'manual' NOT NULL,
	`schedule_id` text,
	`progress` text,
	`result` text,
	`error` text,
	`created_by` text,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	`updated_at` integer,
	`started_at` integer,
	`finished_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_dedupe_key_unique` ON `jobs` (`dedupe_key`);--> statement-breakpoint
CREATE INDEX `jobs_dispatch_idx` ON `jobs` (`status`,`kind`,`priority`,`not_before`,`created_at`);--> statement-breakpoint
CREATE INDEX `jobs_lease_idx` ON `jobs` (`status`,`lease_expires_at`);--> statement-breakpoint
CREATE INDEX `jobs_owner_idx` ON `jobs` (`lease_owner`,`status`);--> statement-breakpoint
CREATE INDEX `jobs_table_idx` ON `jobs` (`table_id`,`kind`,`created_at`);--> statement-breakpoint
CREATE INDEX `jobs_kind_created_idx` ON `jobs` (`kind`,`created_at`);--> statement-breakpoint
CREATE TABLE `tables` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`uri` text NOT NULL,
	`format` text NOT NULL,
	`priority` text NOT NULL,
	`target_file_size_mb` integer DEFAULT 512 NOT NULL,
	`inventory_report_uri` text,
	`onboarding_status` text DEFAULT 'pending' NOT NULL,
	`onboarding_error` text,
	`onboarding_job_id` text,
	`recipe` text,
	`onboarded_at` integer,
	`created_by` text,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	`updated_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tables_name_unique` ON `tables` (`name`);--> statement-breakpoint
CREATE INDEX `tables_status_name_idx` ON `tables` (`onboarding_status`,`name`);--> statement-breakpoint
CREATE TABLE `schedules` (
	`id` text PRIMARY KEY NOT NULL,
	`table_id` text NOT NULL,
	`job_type` text NOT NULL,
	`schedule_type` text NOT NULL,
	`lookback_start` integer,
	`lookback_end` integer,
	`run_time_utc` text,
	`backfill_col` text,
	`backfill_start_date` text,
	`backfill_end_date` text,
	`enabled` integer DEFAULT true NOT NULL,
	`next_run_at` integer,
	`last_slot` text,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	`updated_at` integer,
	FOREIGN KEY (`table_id`) REFERENCES `tables`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `schedules_table_job_type_idx` ON `schedules` (`table_id`,`job_type`);--> statement-breakpoint
CREATE INDEX `schedules_due_idx` ON `schedules` (`enabled`,`next_run_at`);--> statement-breakpoint
CREATE INDEX `schedules_run_time_idx` ON `schedules` (`run_time_utc`);