DROP INDEX `managed_tables_list_idx`;--> statement-breakpoint
CREATE INDEX `managed_tables_name_idx` ON `managed_tables` (lower("name"));--> statement-breakpoint
CREATE INDEX `managed_tables_list_idx` ON `managed_tables` (`full_name`,`connection_id`,`name`);--> statement-breakpoint
ALTER TABLE `policy_catalogs` ADD `managed_count` integer DEFAULT 0 NOT NULL;