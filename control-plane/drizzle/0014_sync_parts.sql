ALTER TABLE `jobs` ADD `part_fence` integer;--> statement-breakpoint
ALTER TABLE `jobs` ADD `part_seq` integer;--> statement-breakpoint
ALTER TABLE `catalog_tables` ADD `sync_fence` integer;
