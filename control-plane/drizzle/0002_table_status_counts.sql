CREATE TABLE `table_status_counts` (
	`status` text PRIMARY KEY NOT NULL,
	`n` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
-- Hand-written below this line: the counts are kept by triggers, so every writer (the API, the
-- onboarding finish hook, a bulk seed) keeps them exact inside its own statement.
INSERT INTO `table_status_counts` (`status`, `n`)
	SELECT `s`.`status`, (SELECT count(*) FROM `tables` WHERE `onboarding_status` = `s`.`status`)
	FROM (SELECT 'pending' AS `status` UNION ALL SELECT 'active' UNION ALL SELECT 'failed' UNION ALL SELECT 'retry') AS `s`;
--> statement-breakpoint
CREATE TRIGGER `tables_count_insert` AFTER INSERT ON `tables`
BEGIN
	UPDATE `table_status_counts` SET `n` = `n` + 1 WHERE `status` = NEW.`onboarding_status`;
END;
--> statement-breakpoint
CREATE TRIGGER `tables_count_delete` AFTER DELETE ON `tables`
BEGIN
	UPDATE `table_status_counts` SET `n` = `n` - 1 WHERE `status` = OLD.`onboarding_status`;
END;
--> statement-breakpoint
CREATE TRIGGER `tables_count_update` AFTER UPDATE OF `onboarding_status` ON `tables`
WHEN OLD.`onboarding_status` IS NOT NEW.`onboarding_status`
BEGIN
	UPDATE `table_status_counts` SET `n` = `n` - 1 WHERE `status` = OLD.`onboarding_status`;
	UPDATE `table_status_counts` SET `n` = `n` + 1 WHERE `status` = NEW.`onboarding_status`;
END;
