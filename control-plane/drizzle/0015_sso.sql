CREATE TABLE `saml_assertions` (
	`id` text PRIMARY KEY NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `saml_assertions_expires_idx` ON `saml_assertions` (`expires_at`);--> statement-breakpoint
CREATE TABLE `sso_login_codes` (
	`code_hash` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sso_login_codes_expires_idx` ON `sso_login_codes` (`expires_at`);--> statement-breakpoint
CREATE TABLE `sso_providers` (
	`protocol` text PRIMARY KEY NOT NULL,
	`settings` text NOT NULL,
	`secret` text,
	`updated_at` integer NOT NULL,
	`updated_by` text
);
--> statement-breakpoint
CREATE TABLE `sso_requests` (
	`key` text PRIMARY KEY NOT NULL,
	`protocol` text NOT NULL,
	`data` text NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sso_requests_expires_idx` ON `sso_requests` (`expires_at`);