ALTER TABLE `tables` ADD `parquet_v2` integer DEFAULT false NOT NULL;
--> statement-breakpoint
-- Hand-written below this line: a table's `wire` (migration 0005) gains `parquet_v2`, so its
-- triggers are made again with it and every table's `wire` is written anew.
DROP TRIGGER `tables_wire_insert`;
--> statement-breakpoint
DROP TRIGGER `tables_wire_update`;
--> statement-breakpoint
UPDATE `tables` SET `wire` = rtrim(json_object(
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
		'updated_at', (replace(datetime(`updated_at` / 1000.0, 'unixepoch', 'subsec'), ' ', 'T') || 'Z')), '}');
--> statement-breakpoint
CREATE TRIGGER `tables_wire_insert` AFTER INSERT ON `tables`
BEGIN
	UPDATE `tables` SET `wire` = rtrim(json_object(
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
		'updated_at', (replace(datetime(`updated_at` / 1000.0, 'unixepoch', 'subsec'), ' ', 'T') || 'Z')), '}') WHERE `rowid` = NEW.`rowid`;
END;
--> statement-breakpoint
CREATE TRIGGER `tables_wire_update` AFTER UPDATE OF `id`, `name`, `uri`, `format`, `priority`, `target_file_size_mb`, `parquet_v2`, `inventory_report_uri`, `onboarding_status`, `onboarding_error`, `onboarding_job_id`, `recipe`, `onboarded_at`, `created_at`, `updated_at` ON `tables`
BEGIN
	UPDATE `tables` SET `wire` = rtrim(json_object(
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
		'updated_at', (replace(datetime(`updated_at` / 1000.0, 'unixepoch', 'subsec'), ' ', 'T') || 'Z')), '}') WHERE `rowid` = NEW.`rowid`;
END;
