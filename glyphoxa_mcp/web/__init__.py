"""The DM's desk: a small web application (server-rendered pages, a few lines of script) for
reviewing what sessions and imports proposed, editing entities, facts and sessions, and
seeing the campaign as one NPC sees it. `glyphoxa-mcp web` serves it;
`desk_app.build_desk` makes it."""
