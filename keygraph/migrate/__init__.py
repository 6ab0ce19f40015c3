"""Table migrations: bring a live table and its items to what a generated package's spec
says, online. `plan` compares (`make_plan`), `run` carries the plan out (`migrate`), with a
checkpoint in the table itself so that a killed migration continues where it stopped."""
