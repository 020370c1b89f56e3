CREATE TABLE `optimus_recommendations` (
	`id` text PRIMARY KEY NOT NULL,
	`submission_id` text NOT NULL,
	`run_id` text NOT NULL,
	`scoring_job_id` text NOT NULL,
	`table_id` text NOT NULL,
	`table_fqn` text NOT NULL,
	`layout` text NOT NULL,
	`current_layout` text,
	`expected_skip_fraction` real NOT NULL,
	`current_skip_fraction` real NOT NULL,
	`measured_skip_fraction` real,
	`bytes_saved_per_day` real NOT NULL,
	`rewrite_bytes` real NOT NULL,
	`reason` text NOT NULL,
	`evidence` text NOT NULL,
	`status` text NOT NULL,
	`status_changed_at` integer,
	`status_changed_by` text,
	`applied_policy_id` text,
	`previous_policy` text,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `optimus_recommendations_scoring_idx` ON `optimus_recommendations` (`scoring_job_id`);--> statement-breakpoint
CREATE INDEX `optimus_recommendations_run_idx` ON `optimus_recommendations` (`submission_id`,`run_id`);--> statement-breakpoint
CREATE INDEX `optimus_recommendations_table_idx` ON `optimus_recommendations` (`table_id`);--> statement-breakpoint
CREATE TABLE `optimus_table_days` (
	`submission_id` text NOT NULL,
	`table_id` text NOT NULL,
	`day` text NOT NULL,
	`table_fqn` text NOT NULL,
	`queries` integer NOT NULL,
	`bytes_scanned` real NOT NULL,
	`measured_skip_fraction` real,
	`predicted_skip_fraction` real,
	`run_id` text NOT NULL,
	`measured_at` integer NOT NULL,
	PRIMARY KEY(`submission_id`, `table_id`, `day`)
);
--> statement-breakpoint
CREATE TABLE `optimus_workloads` (
	`run_id` text NOT NULL,
	`table_id` text NOT NULL,
	`submission_id` text NOT NULL,
	`table_fqn` text NOT NULL,
	`queries` integer NOT NULL,
	`bytes_scanned` real NOT NULL,
	`filter_sets` text NOT NULL,
	`other` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	PRIMARY KEY(`run_id`, `table_id`)
);
--> statement-breakpoint
CREATE INDEX `optimus_workloads_submission_idx` ON `optimus_workloads` (`submission_id`);