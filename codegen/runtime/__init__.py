"""Hand-written runtime copied unchanged into generated/runtime: plans, the Store protocol,
errors, the cursor codec, the key codec and page types."""
