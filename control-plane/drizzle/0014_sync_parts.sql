ALTER TABLE `jobs` ADD `part_fence` integer;--> statement-breakpoint
ALTER TABLE `jobs` ADD `part_seq` integer;--> statement-breakpoint
ALTER TABLE `catalog_tables` ADD `sync_fence` integer;--> statement-breakpoint
DROP INDEX `catalog_tables_live_size_idx`;--> statement-breakpoint
DROP INDEX `catalog_tables_live_updated_idx`;--> statement-breakpoint
CREATE INDEX `catalog_tables_live_size_asc_idx` ON `catalog_tables` (`connection_id`,"size_bytes" is null,`size_bytes`,`full_name`) WHERE "catalog_tables"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX `catalog_tables_live_size_desc_idx` ON `catalog_tables` (`connection_id`,"size_bytes" is null,"size_bytes" desc,`full_name`) WHERE "catalog_tables"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX `catalog_tables_live_updated_asc_idx` ON `catalog_tables` (`connection_id`,"updated_at" is null,`updated_at`,`full_name`,`size_bytes`) WHERE "catalog_tables"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX `catalog_tables_live_updated_desc_idx` ON `catalog_tables` (`connection_id`,"updated_at" is null,"updated_at" desc,`full_name`,`size_bytes`) WHERE "catalog_tables"."deleted_at" is null;
