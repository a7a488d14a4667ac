"""The read service: what one viewer may read of one campaign (see `views.view.View`)."""
