from kerntailor.cli import main

main()
