ALTER TABLE "memberships" ADD COLUMN "last_login_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "memberships" ADD COLUMN "last_login_ip" varchar(64);--> statement-breakpoint
ALTER TABLE "scim_identities" ADD COLUMN "display_name" varchar(200);--> statement-breakpoint
ALTER TABLE "scim_identities" ADD COLUMN "emails" jsonb;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "email_verified_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "email_verified_via" varchar(20);--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "origin_organization_id" varchar(24);--> statement-breakpoint
-- Accounts that an organization's SSO (an enterprise subject in sso_id) or SCIM (a SCIM identity, no password)
-- created, and that belong to that organization alone, are that organization's to manage.
UPDATE "users" u SET "origin_organization_id" = m."organization_id"
FROM "memberships" m
WHERE m."user_id" = u."id"
  AND u."password_hash" IS NULL
  AND (SELECT count(*) FROM "memberships" o WHERE o."user_id" = u."id") = 1
  AND ((u."sso_id" IS NOT NULL AND u."sso_id" NOT LIKE 'microsoft:%')
       OR EXISTS (SELECT 1 FROM "scim_identities" s WHERE s."organization_id" = m."organization_id" AND s."user_id" = u."id"));--> statement-breakpoint
-- Addresses already proven: an e-mail-verified sign-up made the account, so nobody else can have set its
-- password. (A magic link used on an account someone else registered proved the mailbox but left that password:
-- such accounts stay unproven, and their next proof claims them.)
UPDATE "users" u SET "email_verified_at" = a."created_at", "email_verified_via" = 'signup'
FROM "audit_entries" a
WHERE a."event_type" = 'auth.register' AND a."target_id" = u."id" AND a."metadata"->>'method' = 'email_verification';--> statement-breakpoint
-- Only an owner may hold the SCIM token's power (it can grant and take the owner role): a token an admin minted
-- before this rule is revoked, and an owner mints a new one.
DELETE FROM "scim_tokens" t
WHERE NOT EXISTS (SELECT 1 FROM "memberships" m
                  WHERE m."organization_id" = t."organization_id" AND m."user_id" = t."created_by"
                    AND m."role" = 'owner' AND m."is_active");--> statement-breakpoint
-- Addresses compare in NFKC form from now on; stored ones are brought to it where that takes nobody's address.
UPDATE "users" u SET "email" = lower(normalize(u."email", NFKC))
WHERE u."email" <> lower(normalize(u."email", NFKC))
  AND NOT EXISTS (SELECT 1 FROM "users" o WHERE o."email" = lower(normalize(u."email", NFKC)));--> statement-breakpoint
UPDATE "invitations" SET "email" = lower(normalize("email", NFKC)) WHERE "email" <> lower(normalize("email", NFKC));
