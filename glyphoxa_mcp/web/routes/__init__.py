"""The desk's pages, one module per page or family of pages."""
