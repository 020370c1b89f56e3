CREATE TABLE `savings_counted` (
	`job_id` text PRIMARY KEY NOT NULL
);
--> statement-breakpoint
CREATE TABLE `savings_daily` (
	`table_id` text NOT NULL,
	`day` text NOT NULL,
	`rewrites` integer DEFAULT 0 NOT NULL,
	`bytes_before` integer DEFAULT 0 NOT NULL,
	`bytes_after` integer DEFAULT 0 NOT NULL,
	`files_before` integer DEFAULT 0 NOT NULL,
	`files_after` integer DEFAULT 0 NOT NULL,
	`partitions_crunched` integer DEFAULT 0 NOT NULL,
	`partitions_deleted` integer DEFAULT 0 NOT NULL,
	`files_deleted` integer DEFAULT 0 NOT NULL,
	`bytes_deleted` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`table_id`, `day`)
);
--> statement-breakpoint
/* Backfill: the jobs that ended before this migration, counted as the finish hooks of savings/rollup.ts count them. Committed rewrites first. */
INSERT INTO `savings_daily` (`table_id`, `day`, `rewrites`, `bytes_before`, `bytes_after`, `files_before`, `files_after`, `partitions_crunched`)
SELECT `table_id`, strftime('%Y-%m-%d', `finished_at` / 1000, 'unixepoch') AS `d`, count(*),
  sum(coalesce(json_extract(`result`, '$.bytes_before'), 0)), sum(coalesce(json_extract(`result`, '$.bytes_after'), 0)),
  sum(coalesce(json_extract(`result`, '$.files_before'), 0)), sum(coalesce(json_extract(`result`, '$.files_after'), 0)),
  sum(coalesce(json_extract(`result`, '$.partitions_crunched'), 0))
FROM `jobs`
WHERE `kind` IN ('crunch', 'optimize') AND `status` = 'succeeded' AND `table_id` IS NOT NULL AND `finished_at` IS NOT NULL
  AND json_extract(`result`, '$.committed_version') IS NOT NULL
GROUP BY `table_id`, `d`;
--> statement-breakpoint
/* Committed partition expirations: the partitions they removed. */
INSERT INTO `savings_daily` (`table_id`, `day`, `partitions_deleted`)
SELECT `table_id`, strftime('%Y-%m-%d', `finished_at` / 1000, 'unixepoch') AS `d`, sum(coalesce(json_array_length(`result`, '$.partitions'), 0))
FROM `jobs`
WHERE `kind` = 'partition_expiration' AND `status` = 'succeeded' AND `table_id` IS NOT NULL AND `finished_at` IS NOT NULL
  AND json_extract(`result`, '$.dry_run') = 0 AND json_extract(`result`, '$.validate') = 0
  AND json_extract(`result`, '$.committed_version') IS NOT NULL
GROUP BY `table_id`, `d`
ON CONFLICT (`table_id`, `day`) DO UPDATE SET `partitions_deleted` = `partitions_deleted` + excluded.`partitions_deleted`;
--> statement-breakpoint
/* Hard deletes: the files their agents reported deleted, with the sizes their records hold. */
INSERT INTO `savings_daily` (`table_id`, `day`, `files_deleted`, `bytes_deleted`)
SELECT j.`table_id`, strftime('%Y-%m-%d', j.`finished_at` / 1000, 'unixepoch') AS `d`, count(*), sum(p.`size_bytes`)
FROM `jobs` j, json_each(j.`result`, '$.files') f
JOIN `pending_deletions` p ON p.`id` = json_extract(f.value, '$.deletion_id')
WHERE j.`kind` = 'hard_delete' AND j.`status` = 'succeeded' AND j.`table_id` IS NOT NULL AND j.`finished_at` IS NOT NULL
  AND json_extract(f.value, '$.outcome') = 'deleted' AND p.`hard_delete_job_id` = j.`id`
GROUP BY j.`table_id`, `d`
ON CONFLICT (`table_id`, `day`) DO UPDATE SET `files_deleted` = `files_deleted` + excluded.`files_deleted`, `bytes_deleted` = `bytes_deleted` + excluded.`bytes_deleted`;
--> statement-breakpoint
/* The all-tables rows: the sum of each day's table rows. */
INSERT INTO `savings_daily`
SELECT '*', `day`, sum(`rewrites`), sum(`bytes_before`), sum(`bytes_after`), sum(`files_before`), sum(`files_after`),
  sum(`partitions_crunched`), sum(`partitions_deleted`), sum(`files_deleted`), sum(`bytes_deleted`)
FROM `savings_daily` WHERE `table_id` != '*' GROUP BY `day`;
--> statement-breakpoint
/* The catalogs' rows: the sum of each day's rows of the tables linked to a synced table of the catalog. */
INSERT INTO `savings_daily`
SELECT '@' || ct.`connection_id` || ':' || ct.`catalog` AS `k`, s.`day`, sum(s.`rewrites`), sum(s.`bytes_before`), sum(s.`bytes_after`),
  sum(s.`files_before`), sum(s.`files_after`), sum(s.`partitions_crunched`), sum(s.`partitions_deleted`),
  sum(s.`files_deleted`), sum(s.`bytes_deleted`)
FROM `savings_daily` s
JOIN `tables` t ON t.`id` = s.`table_id`
JOIN `catalog_tables` ct ON ct.`connection_id` = t.`catalog_connection_id` AND ct.`full_name` = t.`catalog_full_name`
GROUP BY `k`, s.`day`;
--> statement-breakpoint
/* Every job counted above is counted once: a finish hook run again for it adds nothing. */
INSERT INTO `savings_counted` (`job_id`)
SELECT `id` FROM `jobs`
WHERE `kind` IN ('crunch', 'optimize', 'partition_expiration', 'hard_delete') AND `status` = 'succeeded'
  AND `table_id` IS NOT NULL AND `finished_at` IS NOT NULL;
