"""Campaigns: many generated cases run, judged and filed (docs/design.md §2).

A campaign cuts the seed space into checkpointed chunks (`orchestrate`), runs each chunk in
a worker as plain-data jobs (`jobs`, `wire`) on an executor (`executors`: local processes or
a Ray cluster), hands every finding to `triage` (bug keys, buckets, reduction, the store),
and keeps statistics (`stats`) that `report` turns into a campaign report. `recheck` reruns
a store's buckets on today's toolchains (the nightly). Campaigns sit above triage: triage
never imports this package."""

from campaigns.orchestrate import Campaign, CampaignConfig, CampaignError, Progress

__all__ = ["Campaign", "CampaignConfig", "CampaignError", "Progress"]
