CREATE TABLE `discovered_prefixes` (
	`attempt_id` text NOT NULL,
	`location_id` text NOT NULL,
	`prefix` text NOT NULL,
	`uri` text NOT NULL,
	`files` integer NOT NULL,
	`bytes` integer NOT NULL,
	`data_files` integer NOT NULL,
	`data_bytes` integer NOT NULL,
	`oldest_at` integer,
	`newest_at` integer,
	`filter` text,
	PRIMARY KEY(`attempt_id`, `prefix`)
);
--> statement-breakpoint
CREATE INDEX `discovered_prefixes_location_idx` ON `discovered_prefixes` (`location_id`);--> statement-breakpoint
CREATE TABLE `discovery_aggregates` (
	`attempt_id` text NOT NULL,
	`bin_id` text NOT NULL,
	`prefix` text NOT NULL,
	`files` integer NOT NULL,
	`bytes` integer NOT NULL,
	`data_files` integer NOT NULL,
	`data_bytes` integer NOT NULL,
	`oldest_at` integer,
	`newest_at` integer,
	PRIMARY KEY(`attempt_id`, `bin_id`, `prefix`)
);
--> statement-breakpoint
CREATE TABLE `discovery_bins` (
	`attempt_id` text NOT NULL,
	`bin_id` text NOT NULL,
	`position` integer NOT NULL,
	`key` text NOT NULL,
	`size` integer NOT NULL,
	`status` text NOT NULL,
	`files` integer,
	`bytes` integer,
	PRIMARY KEY(`attempt_id`, `bin_id`)
);
--> statement-breakpoint
CREATE TABLE `discovery_schedules` (
	`id` text PRIMARY KEY NOT NULL,
	`location_id` text NOT NULL,
	`status` text NOT NULL,
	`trigger` text NOT NULL,
	`job_id` text,
	`report` text,
	`bins_total` integer,
	`bins_done` integer DEFAULT 0 NOT NULL,
	`bins_skipped` integer DEFAULT 0 NOT NULL,
	`total_bytes` integer,
	`done_bin_bytes` integer DEFAULT 0 NOT NULL,
	`files_seen` integer DEFAULT 0 NOT NULL,
	`bytes_seen` integer DEFAULT 0 NOT NULL,
	`objects_scanned` integer DEFAULT 0 NOT NULL,
	`error` text,
	`created_by` text,
	`created_at` integer NOT NULL,
	`started_at` integer,
	`ended_at` integer,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `discovery_schedules_location_idx` ON `discovery_schedules` (`location_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `discovery_schedules_job_idx` ON `discovery_schedules` (`job_id`);