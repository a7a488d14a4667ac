import sys

from glyphoxa_mcp.cli import main

sys.exit(main())
