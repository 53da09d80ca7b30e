"""The bots service (issue 20, D10): computer players at the tables whose hosts chose them.

It keeps nothing: every robot's turn comes from the robots' work queue (``RobotTurn``: ids,
no state), the seat's view from the table service's ``RobotService`` (the projection a
person in the seat gets, S6), and the move goes back through the same door, checked like a
person's. A restarted or added replica picks up the turns still queued.
"""
