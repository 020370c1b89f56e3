CREATE TABLE `optimus_runs` (
	`job_id` text PRIMARY KEY NOT NULL,
	`submission_id` text NOT NULL,
	`trigger` text NOT NULL,
	`slot_day` text,
	`window_start` text NOT NULL,
	`window_end` text NOT NULL,
	`requested_by` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `optimus_runs_submission_idx` ON `optimus_runs` (`submission_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `optimus_runs_slot_idx` ON `optimus_runs` (`submission_id`,`slot_day`);--> statement-breakpoint
CREATE TABLE `optimus_submissions` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`engine` text NOT NULL,
	`lookback_days` integer NOT NULL,
	`daily_sync_time_utc` text NOT NULL,
	`query_logs_uri` text NOT NULL,
	`active` integer NOT NULL,
	`last_run_status` text,
	`last_run_error` text,
	`last_run_finished_at` integer,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `optimus_submissions_due_idx` ON `optimus_submissions` (`daily_sync_time_utc`) WHERE "optimus_submissions"."active" = 1;