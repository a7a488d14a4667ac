"""The session pipeline: transcripts in, chunks, embeddings and links to the graph out."""
