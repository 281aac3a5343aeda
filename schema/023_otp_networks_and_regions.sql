-- SMS pumping's ceilings (docs/architecture.md "Abuse limits"): code requests are also counted
-- per IPv6 /48 (`client_network`, operational like `client_address`: not in any event) and,
-- for sign-in codes, per destination country (`region`, from the request's event, so a rebuild
-- fills it).
ALTER TABLE otp_requests ADD COLUMN client_network text, ADD COLUMN region text;
CREATE INDEX otp_requests_by_network ON otp_requests (client_network, created_at) WHERE client_network IS NOT NULL;
CREATE INDEX otp_requests_by_region ON otp_requests (region, created_at) WHERE session_id IS NULL;
