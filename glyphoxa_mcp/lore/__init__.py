"""The lore library's documents: Markdown, text and Foundry journal exports cut into
sections under their headings (pure: no database, no files)."""
