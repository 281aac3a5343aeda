-- Standard Webhooks and CloudEvents for subscriptions (issue 44). A subscription's pushes are the
-- service's JSON or a CloudEvents batch (`format`). A rotated secret keeps signing beside the new
-- one until `previous_secret_until` (24 hours), so receivers can move without losing a push.
-- Subscriptions made before keep their secret as it was given, and keep working.
ALTER TABLE webhook_subscriptions
    ADD COLUMN format text NOT NULL DEFAULT 'plain' CHECK (format IN ('plain', 'cloudevents')),
    ADD COLUMN previous_secret_sealed bytea,
    ADD COLUMN previous_secret_until timestamptz;
