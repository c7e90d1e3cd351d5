import sys

from .cli import main

if __name__ == "__main__":  # importing the module (a documentation tool does) runs nothing
    sys.exit(main())
