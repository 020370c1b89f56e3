ALTER TABLE `users` ADD `wire` text;--> statement-breakpoint
CREATE INDEX `users_created_idx` ON `users` (`created_at`,`id`);--> statement-breakpoint
-- Hand-written below this line. `wire` holds a user as the JSON text the API returns
-- (`UserSchema`, keys in `toWire`'s order), so a page of the user list reads it instead of building
-- it (`src/users/view.ts`). The view `user_wire` defines that JSON once; triggers copy it into
-- `wire` whenever one of its fields changes, whoever writes the row (a login's `last_login_at`
-- included; `password_hash` and `updated_at` are not in it, so changing them fires nothing).
-- Timestamps are written as Date.toISOString() writes them. A change of the shape is a migration
-- that makes the view again and rewrites the column; the triggers stay.
CREATE VIEW `user_wire` AS SELECT `rowid` AS `rid`, json_object(
		'id', `id`,
		'full_name', `full_name`,
		'username', `username`,
		'email', `email`,
		'role', `role`,
		'auth_type', `auth_type`,
		'status', `status`,
		'protected', json(CASE WHEN `protected` THEN 'true' ELSE 'false' END),
		'last_login_at', (replace(datetime(`last_login_at` / 1000.0, 'unixepoch', 'subsec'), ' ', 'T') || 'Z'),
		'created_at', (replace(datetime(`created_at` / 1000.0, 'unixepoch', 'subsec'), ' ', 'T') || 'Z')) AS `wire` FROM `users`;
--> statement-breakpoint
UPDATE `users` SET `wire` = (SELECT `wire` FROM `user_wire` WHERE `rid` = `users`.`rowid`);
--> statement-breakpoint
CREATE TRIGGER `users_wire_insert` AFTER INSERT ON `users`
BEGIN
	UPDATE `users` SET `wire` = (SELECT `wire` FROM `user_wire` WHERE `rid` = NEW.`rowid`) WHERE `rowid` = NEW.`rowid`;
END;
--> statement-breakpoint
CREATE TRIGGER `users_wire_update` AFTER UPDATE OF `id`, `full_name`, `username`, `email`, `role`, `auth_type`, `status`, `protected`, `last_login_at`, `created_at` ON `users`
BEGIN
	UPDATE `users` SET `wire` = (SELECT `wire` FROM `user_wire` WHERE `rid` = NEW.`rowid`) WHERE `rowid` = NEW.`rowid`;
END;
