-- The batch a subscription's pusher is sending, by its last event (`retry_through_*`), written
-- before the POST and cleared once it is acknowledged: a retry after a failure, a lost lease or
-- a crash sends the same events again, so it carries the same `webhook-id` however many events
-- came since.
ALTER TABLE webhook_subscriptions
    ADD COLUMN retry_through_tx xid8,
    ADD COLUMN retry_through_position bigint;
