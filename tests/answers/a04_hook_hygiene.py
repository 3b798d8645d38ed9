"""stub"""

ANSWERS = []
