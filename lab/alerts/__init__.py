"""Alert webhooks: a durable outbox written with the audit row, signed and sent by a worker."""
