CREATE TABLE `managed_tables` (
	`connection_id` text NOT NULL,
	`full_name` text NOT NULL,
	`catalog` text NOT NULL,
	`schema` text NOT NULL,
	`name` text NOT NULL,
	`policy_id` text,
	`lake_table_id` text,
	`waiting_reason` text,
	`next_run_at` integer,
	`managed_since` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`connection_id`, `full_name`)
);
--> statement-breakpoint
CREATE INDEX `managed_tables_list_idx` ON `managed_tables` (`full_name`,`connection_id`);--> statement-breakpoint
CREATE INDEX `managed_tables_due_idx` ON `managed_tables` (`next_run_at`) WHERE "managed_tables"."next_run_at" is not null;--> statement-breakpoint
CREATE INDEX `managed_tables_scope_idx` ON `managed_tables` (`connection_id`,`catalog`,`schema`);--> statement-breakpoint
CREATE INDEX `managed_tables_policy_idx` ON `managed_tables` (`policy_id`);--> statement-breakpoint
CREATE INDEX `managed_tables_lake_idx` ON `managed_tables` (`lake_table_id`) WHERE "managed_tables"."lake_table_id" is not null;--> statement-breakpoint
CREATE TABLE `policies` (
	`id` text PRIMARY KEY NOT NULL,
	`connection_id` text NOT NULL,
	`catalog` text NOT NULL,
	`scope` text NOT NULL,
	`target` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`body` text NOT NULL,
	`version` integer DEFAULT 1 NOT NULL,
	`created_by` text,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	`updated_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `policies_scope_idx` ON `policies` (`connection_id`,`catalog`,`scope`,`target`);--> statement-breakpoint
CREATE TABLE `policy_catalogs` (
	`connection_id` text NOT NULL,
	`catalog` text NOT NULL,
	`resolved_at` integer,
	`paused_at` integer,
	`paused_by` text,
	PRIMARY KEY(`connection_id`, `catalog`)
);
--> statement-breakpoint
ALTER TABLE `catalog_tables` ADD `first_synced_at` integer;--> statement-breakpoint
UPDATE `catalog_tables` SET `first_synced_at` = `synced_at`;