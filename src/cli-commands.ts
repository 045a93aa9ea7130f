// Commands contributed by other modules register themselves when imported here.
export {};
