"""Storage backends implementing the Store protocol: embedded SQLite and DynamoDB."""
