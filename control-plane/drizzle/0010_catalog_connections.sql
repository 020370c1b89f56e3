CREATE TABLE `catalog_connections` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`settings` text NOT NULL,
	`secrets` text NOT NULL,
	`secret_fields` text NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`sync_interval_hours` integer DEFAULT 24 NOT NULL,
	`sync_status` text DEFAULT 'idle' NOT NULL,
	`last_synced_at` integer,
	`last_sync_error` text,
	`last_sync_job_id` text,
	`sync_requested_at` integer,
	`created_by` text,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	`updated_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `catalog_connections_name_unique` ON `catalog_connections` (`name`);--> statement-breakpoint
CREATE INDEX `catalog_connections_active_idx` ON `catalog_connections` (`is_active`,`name`);--> statement-breakpoint
CREATE TABLE `catalog_tables` (
	`connection_id` text NOT NULL,
	`full_name` text NOT NULL,
	`catalog` text NOT NULL,
	`schema` text NOT NULL,
	`name` text NOT NULL,
	`format` text,
	`table_type` text,
	`location` text,
	`size_bytes` integer,
	`has_partitions` integer,
	`updated_at` integer,
	`detail` text NOT NULL,
	`synced_at` integer NOT NULL,
	`sync_job_id` text NOT NULL,
	`deleted_at` integer,
	PRIMARY KEY(`connection_id`, `full_name`)
);
--> statement-breakpoint
CREATE INDEX `catalog_tables_schema_idx` ON `catalog_tables` (`connection_id`,`catalog`,`schema`,`name`);--> statement-breakpoint
CREATE INDEX `catalog_tables_name_idx` ON `catalog_tables` (`connection_id`,`name`);--> statement-breakpoint
CREATE INDEX `catalog_tables_size_idx` ON `catalog_tables` (`connection_id`,`size_bytes`);--> statement-breakpoint
CREATE INDEX `catalog_tables_updated_idx` ON `catalog_tables` (`connection_id`,`updated_at`);--> statement-breakpoint
CREATE INDEX `catalog_tables_synced_idx` ON `catalog_tables` (`connection_id`,`synced_at`);