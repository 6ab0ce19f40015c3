"""The embedded store: DynamoDB's operations and limits over one SQLite file."""
