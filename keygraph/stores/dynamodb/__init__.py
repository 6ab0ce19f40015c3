"""The DynamoDB store (AWS, DynamoDB Local or any endpoint), its transport and its table
administration, and the DynamoDB Local launcher."""
