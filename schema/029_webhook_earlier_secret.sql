-- A second rotation of a subscription's secret within the overlap must not cut short the one
-- before it: every replaced secret keeps signing until its own 24 hours end. The secret the
-- latest rotation replaced stays in `previous_secret_*`; the one replaced before it, while its
-- overlap lasts, moves here. (A third rotation within a day ends the oldest's overlap early.)
ALTER TABLE webhook_subscriptions
    ADD COLUMN earlier_secret_sealed bytea,
    ADD COLUMN earlier_secret_until timestamptz;
