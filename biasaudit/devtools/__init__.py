"""Tools for the developers of biasaudit (the mutation suite); not part of the user API."""
