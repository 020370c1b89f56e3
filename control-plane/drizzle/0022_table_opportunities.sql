CREATE TABLE `table_opportunities` (
	`table_id` text PRIMARY KEY NOT NULL,
	`job_id` text NOT NULL,
	`measured_at` integer NOT NULL,
	`table_version` integer NOT NULL,
	`potential_drr_percent` real,
	`small_files` integer NOT NULL,
	`small_file_share` real NOT NULL,
	`missing_ordering` integer NOT NULL,
	`result` text NOT NULL,
	FOREIGN KEY (`table_id`) REFERENCES `tables`(`id`) ON UPDATE no action ON DELETE cascade
);
