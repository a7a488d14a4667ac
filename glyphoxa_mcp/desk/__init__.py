"""The DM's desk: every action the DM takes on a campaign's memory, one typed function each,
that the commands (`cli/`) and the desk's pages (`web/`) both call. Neither reaches the
stores or the pipeline itself.

An action takes a `CampaignDesk` (one campaign, `campaign_desk.py`) or, for what spans
campaigns (forks, deletions, tokens, the database's status), the `Database`; it takes
ids and domain values (a command or a page resolves the names the DM typed, so its errors
name its own fields), returns domain values or the desk's own, and raises the errors of
`errors.py`. Nothing here knows argparse or HTTP.
"""
