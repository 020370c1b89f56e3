ALTER TABLE `table_status_counts` ADD `generation` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Hand-written below this line: the triggers of 0002 also bump the generation of every status a
-- table joins or leaves, and a rename bumps its status's generation (its place in the list moves).
DROP TRIGGER `tables_count_insert`;
--> statement-breakpoint
DROP TRIGGER `tables_count_delete`;
--> statement-breakpoint
DROP TRIGGER `tables_count_update`;
--> statement-breakpoint
CREATE TRIGGER `tables_count_insert` AFTER INSERT ON `tables`
BEGIN
	UPDATE `table_status_counts` SET `n` = `n` + 1, `generation` = `generation` + 1
		WHERE `status` = NEW.`onboarding_status`;
END;
--> statement-breakpoint
CREATE TRIGGER `tables_count_delete` AFTER DELETE ON `tables`
BEGIN
	UPDATE `table_status_counts` SET `n` = `n` - 1, `generation` = `generation` + 1
		WHERE `status` = OLD.`onboarding_status`;
END;
--> statement-breakpoint
CREATE TRIGGER `tables_count_update` AFTER UPDATE OF `onboarding_status` ON `tables`
WHEN OLD.`onboarding_status` IS NOT NEW.`onboarding_status`
BEGIN
	UPDATE `table_status_counts` SET `n` = `n` - 1, `generation` = `generation` + 1
		WHERE `status` = OLD.`onboarding_status`;
	UPDATE `table_status_counts` SET `n` = `n` + 1, `generation` = `generation` + 1
		WHERE `status` = NEW.`onboarding_status`;
END;
--> statement-breakpoint
CREATE TRIGGER `tables_rename` AFTER UPDATE OF `name` ON `tables`
WHEN OLD.`name` IS NOT NEW.`name`
BEGIN
	UPDATE `table_status_counts` SET `generation` = `generation` + 1 WHERE `status` = NEW.`onboarding_status`;
END;
