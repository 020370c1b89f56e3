ALTER TABLE `tables` ADD `catalog_connection_id` text;--> statement-breakpoint
ALTER TABLE `tables` ADD `catalog_full_name` text;--> statement-breakpoint
ALTER TABLE `tables` ADD `catalog_table_deleted_at` integer;--> statement-breakpoint
CREATE INDEX `tables_catalog_idx` ON `tables` (`catalog_connection_id`,`catalog_full_name`) WHERE "tables"."catalog_connection_id" is not null;--> statement-breakpoint
-- Hand-written below this line: a table's JSON (migration 0005) gains its catalog link
-- (`catalog_connection_id`, `catalog_table`) and `catalog_table_deleted`. The view is made again
-- with them, every table's `wire` is rewritten, and its update trigger fires on the new columns too.
DROP VIEW `table_wire`;
--> statement-breakpoint
CREATE VIEW `table_wire` AS SELECT `rowid` AS `rid`, rtrim(json_object(
		'id', `id`,
		'name', `name`,
		'uri', `uri`,
		'format', `format`,
		'priority', `priority`,
		'target_file_size_mb', `target_file_size_mb`,
		'parquet_v2', json(CASE WHEN `parquet_v2` THEN 'true' ELSE 'false' END),
		'inventory_report_uri', `inventory_report_uri`,
		'catalog_connection_id', `catalog_connection_id`,
		'catalog_table', `catalog_full_name`,
		'catalog_table_deleted', json(CASE WHEN `catalog_table_deleted_at` IS NOT NULL THEN 'true' ELSE 'false' END),
		'onboarding_status', `onboarding_status`,
		'onboarding_error', `onboarding_error`,
		'onboarding_job_id', `onboarding_job_id`,
		'recipe', json(`recipe`),
		'onboarded_at', (replace(datetime(`onboarded_at` / 1000.0, 'unixepoch', 'subsec'), ' ', 'T') || 'Z'),
		'created_at', (replace(datetime(`created_at` / 1000.0, 'unixepoch', 'subsec'), ' ', 'T') || 'Z'),
		'updated_at', (replace(datetime(`updated_at` / 1000.0, 'unixepoch', 'subsec'), ' ', 'T') || 'Z')), '}') AS `wire` FROM `tables`;
--> statement-breakpoint
UPDATE `tables` SET `wire` = (SELECT `wire` FROM `table_wire` WHERE `rid` = `tables`.`rowid`);
--> statement-breakpoint
DROP TRIGGER `tables_wire_update`;
--> statement-breakpoint
CREATE TRIGGER `tables_wire_update` AFTER UPDATE OF `id`, `name`, `uri`, `format`, `priority`, `target_file_size_mb`, `parquet_v2`, `inventory_report_uri`, `catalog_connection_id`, `catalog_full_name`, `catalog_table_deleted_at`, `onboarding_status`, `onboarding_error`, `onboarding_job_id`, `recipe`, `onboarded_at`, `created_at`, `updated_at` ON `tables`
BEGIN
	UPDATE `tables` SET `wire` = (SELECT `wire` FROM `table_wire` WHERE `rid` = NEW.`rowid`) WHERE `rowid` = NEW.`rowid`;
END;
