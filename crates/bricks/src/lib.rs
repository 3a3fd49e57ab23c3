//! cocode-bricks (layer L2): atomic scaffolding — templates, variables, a staging directory, hooks through the launcher, and a single-rename commit.
