"""Recording a session while the table plays: utterances in as they are spoken, passages and
extraction in the background, the session's temporary facts, and the end of the session."""
