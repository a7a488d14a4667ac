"""Name correction: putting back the campaign names that speech-to-text garbled."""
