ALTER TABLE `tables` ADD `wire` text;--> statement-breakpoint
ALTER TABLE `schedules` ADD `wire` text;
--> statement-breakpoint
-- Hand-written below this line. `wire` holds a row's fields as the JSON text the API returns, so a
-- page of the table list reads it instead of building it (`src/tables/view.ts` adds the rest).
-- The views `table_wire` and `schedule_wire` define that JSON once; triggers copy it into `wire`
-- whenever one of its fields changes, whoever writes the row. A schedule's `next_run_at`,
-- `last_slot` and `updated_at` are not in it (the scheduler moves them), so a tick fires none.
-- It is the object without its closing brace: rtrim removes exactly one `}`, because the last
-- field (`updated_at` of a table, `created_at` of a schedule) is a string or null, never an object.
-- Timestamps are written as Date.toISOString() writes them. A change of either shape is a
-- migration that makes the view again and rewrites the column (see 0006); the triggers stay.
CREATE VIEW `table_wire` AS SELECT `rowid` AS `rid`, rtrim(json_object(
		'id', `id`,
		'name', `name`,
		'uri', `uri`,
		'format', `format`,
		'priority', `priority`,
		'target_file_size_mb', `target_file_size_mb`,
		'inventory_report_uri', `inventory_report_uri`,
		'onboarding_status', `onboarding_status`,
		'onboarding_error', `onboarding_error`,
		'onboarding_job_id', `onboarding_job_id`,
		'recipe', json(`recipe`),
		'onboarded_at', (replace(datetime(`onboarded_at` / 1000.0, 'unixepoch', 'subsec'), ' ', 'T') || 'Z'),
		'created_at', (replace(datetime(`created_at` / 1000.0, 'unixepoch', 'subsec'), ' ', 'T') || 'Z'),
		'updated_at', (replace(datetime(`updated_at` / 1000.0, 'unixepoch', 'subsec'), ' ', 'T') || 'Z')), '}') AS `wire` FROM `tables`;
--> statement-breakpoint
CREATE VIEW `schedule_wire` AS SELECT `rowid` AS `rid`, rtrim(json_object(
		'id', `id`,
		'table_id', `table_id`,
		'job_type', `job_type`,
		'schedule_type', `schedule_type`,
		'lookback_start', `lookback_start`,
		'lookback_end', `lookback_end`,
		'run_time_utc', `run_time_utc`,
		'backfill_col', `backfill_col`,
		'backfill_start_date', `backfill_start_date`,
		'backfill_end_date', `backfill_end_date`,
		'enabled', json(CASE WHEN `enabled` THEN 'true' ELSE 'false' END),
		'created_at', (replace(datetime(`created_at` / 1000.0, 'unixepoch', 'subsec'), ' ', 'T') || 'Z')), '}') AS `wire` FROM `schedules`;
--> statement-breakpoint
UPDATE `tables` SET `wire` = (SELECT `wire` FROM `table_wire` WHERE `rid` = `tables`.`rowid`);
--> statement-breakpoint
UPDATE `schedules` SET `wire` = (SELECT `wire` FROM `schedule_wire` WHERE `rid` = `schedules`.`rowid`);
--> statement-breakpoint
CREATE TRIGGER `tables_wire_insert` AFTER INSERT ON `tables`
BEGIN
	UPDATE `tables` SET `wire` = (SELECT `wire` FROM `table_wire` WHERE `rid` = NEW.`rowid`) WHERE `rowid` = NEW.`rowid`;
END;
--> statement-breakpoint
CREATE TRIGGER `tables_wire_update` AFTER UPDATE OF `id`, `name`, `uri`, `format`, `priority`, `target_file_size_mb`, `inventory_report_uri`, `onboarding_status`, `onboarding_error`, `onboarding_job_id`, `recipe`, `onboarded_at`, `created_at`, `updated_at` ON `tables`
BEGIN
	UPDATE `tables` SET `wire` = (SELECT `wire` FROM `table_wire` WHERE `rid` = NEW.`rowid`) WHERE `rowid` = NEW.`rowid`;
END;
--> statement-breakpoint
CREATE TRIGGER `schedules_wire_insert` AFTER INSERT ON `schedules`
BEGIN
	UPDATE `schedules` SET `wire` = (SELECT `wire` FROM `schedule_wire` WHERE `rid` = NEW.`rowid`) WHERE `rowid` = NEW.`rowid`;
END;
--> statement-breakpoint
CREATE TRIGGER `schedules_wire_update` AFTER UPDATE OF `id`, `table_id`, `job_type`, `schedule_type`, `lookback_start`, `lookback_end`, `run_time_utc`, `backfill_col`, `backfill_start_date`, `backfill_end_date`, `enabled`, `created_at` ON `schedules`
BEGIN
	UPDATE `schedules` SET `wire` = (SELECT `wire` FROM `schedule_wire` WHERE `rid` = NEW.`rowid`) WHERE `rowid` = NEW.`rowid`;
END;
