ALTER TABLE `tables` ADD `parquet_v2` integer DEFAULT false NOT NULL;
--> statement-breakpoint
-- Hand-written below this line: a table's JSON (migration 0005) gains `parquet_v2`. The view is
-- made again with it, every table's `wire` is rewritten, and its update trigger is made again to
-- fire on the new column too.
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
CREATE TRIGGER `tables_wire_update` AFTER UPDATE OF `id`, `name`, `uri`, `format`, `priority`, `target_file_size_mb`, `parquet_v2`, `inventory_report_uri`, `onboarding_status`, `onboarding_error`, `onboarding_job_id`, `recipe`, `onboarded_at`, `created_at`, `updated_at` ON `tables`
BEGIN
	UPDATE `tables` SET `wire` = (SELECT `wire` FROM `table_wire` WHERE `rid` = NEW.`rowid`) WHERE `rowid` = NEW.`rowid`;
END;
