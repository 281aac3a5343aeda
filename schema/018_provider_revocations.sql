-- Provider token revocations go through the outbox (issue 24): channel 'provider', the recipient
-- the provider's name, the token sealed under a key derived from the master key. The dispatcher
-- calls the provider's revoke endpoint instead of the delivery webhook.
ALTER TABLE outbox DROP CONSTRAINT outbox_channel_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_channel_check CHECK (channel IN ('sms', 'email', 'provider'));
