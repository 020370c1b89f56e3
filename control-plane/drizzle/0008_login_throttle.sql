CREATE TABLE `login_throttle` (
	`key` text PRIMARY KEY NOT NULL,
	`failures` integer NOT NULL,
	`blocked_until` integer,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `login_throttle_expires_idx` ON `login_throttle` (`expires_at`);