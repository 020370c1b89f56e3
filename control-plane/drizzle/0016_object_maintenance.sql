CREATE TABLE `locations` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`uri` text NOT NULL,
	`discovery_method` text NOT NULL,
	`inventory_uri` text,
	`inventory_format` text,
	`discovery_cadence` text NOT NULL,
	`skip_age_days` integer NOT NULL,
	`run_discovery_immediately` integer NOT NULL,
	`input_format` text NOT NULL,
	`status` text NOT NULL,
	`status_before_archive` text,
	`last_discovered_at` integer,
	`created_by` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `locations_name_unique` ON `locations` (`name`);--> statement-breakpoint
CREATE TABLE `prefix_policies` (
	`id` text PRIMARY KEY NOT NULL,
	`prefix_id` text NOT NULL,
	`version` integer NOT NULL,
	`active` integer NOT NULL,
	`policy` text NOT NULL,
	`created_by` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `prefix_policies_version_idx` ON `prefix_policies` (`prefix_id`,`version`);--> statement-breakpoint
CREATE UNIQUE INDEX `prefix_policies_active_idx` ON `prefix_policies` (`prefix_id`) WHERE "prefix_policies"."active" = 1;--> statement-breakpoint
CREATE TABLE `prefixes` (
	`id` text PRIMARY KEY NOT NULL,
	`location_id` text,
	`uri` text NOT NULL,
	`management_state` text NOT NULL,
	`state_reason` text,
	`source_state` text NOT NULL,
	`missing_since` integer,
	`files` integer,
	`bytes` integer,
	`newest_object_at` integer,
	`discovered_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `prefixes_uri_unique` ON `prefixes` (`uri`);--> statement-breakpoint
CREATE INDEX `prefixes_location_idx` ON `prefixes` (`location_id`,`uri`);