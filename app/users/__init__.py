"""What Herald keeps per user, in Redis: accounts and API keys, topic
subscriptions, read state, archived and snoozed notifications, preferences."""
