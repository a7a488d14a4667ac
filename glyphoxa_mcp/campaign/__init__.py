"""Campaign knowledge the DM writes: the campaign file and loading it into the graph."""
