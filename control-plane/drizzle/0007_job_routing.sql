ALTER TABLE `agents` ADD `allow` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `agents` ADD `endpoints` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `locations` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `endpoints` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `exclusion` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `locks` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `refusals` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
CREATE INDEX `jobs_exclusion_idx` ON `jobs` (`exclusion`,`status`,`table_id`);--> statement-breakpoint
CREATE INDEX `jobs_refused_idx` ON `jobs` (`status`) WHERE `refusals` != '[]';--> statement-breakpoint
ALTER TABLE `tables` ADD `location_key` text;--> statement-breakpoint
CREATE INDEX `tables_location_unset_idx` ON `tables` (`id`) WHERE `location_key` IS NULL;--> statement-breakpoint
-- Jobs that were active before this migration keep the overlap rules their kinds declare
-- (jobs/kinds.ts), so an upgrade in the middle of a crunch does not let a second one start.
UPDATE `jobs` SET
  `exclusion` = CASE `kind` WHEN 'crunch' THEN 'rewrite' WHEN 'optimize' THEN 'rewrite' ELSE `kind` END,
  `locks` = json_array('table:' || `table_id` || '/')
WHERE `status` IN ('queued', 'offered', 'running', 'cancelling') AND `table_id` IS NOT NULL
  AND `kind` IN ('crunch', 'optimize', 'vacuum', 'partition_expiration')
  AND NOT (`kind` = 'partition_expiration' AND coalesce(json_extract(`payload`, '$.validate'), 0) = 1);
