// producer_consumer.cpp: producers and consumers around a bounded queue,
// with weft::mutex and weft::condition_variable through std::unique_lock,
// as one writes it with the std:: types: while a thread waits for room or
// for an item, its worker runs the others. Build against an installed weft:
//   c++ -std=c++17 producer_consumer.cpp $(pkg-config --cflags --libs weft)
#include <cstdio>
#include <deque>
#include <mutex>
#include <vector>

#include <weft.hpp>

class bounded_queue
{
  public:
    explicit bounded_queue(size_t cap) : cap_(cap)
    {
    }

    void push(long v)
    {
        std::unique_lock<weft::mutex> lk(m_);
        not_full_.wait(lk, [this] { return items_.size() < cap_; });
        items_.push_back(v);
        not_empty_.notify_one();
    }
    // false once the queue is closed and empty
    bool pop(long &v)
    {
        std::unique_lock<weft::mutex> lk(m_);
        not_empty_.wait(lk, [this] { return !items_.empty() || closed_; });
        if (items_.empty())
            return false;
        v = items_.front();
        items_.pop_front();
        not_full_.notify_one();
        return true;
    }
    void close()
    {
        std::lock_guard<weft::mutex> lk(m_);
        closed_ = true;
        not_empty_.notify_all();
    }

  private:
    weft::mutex m_;
    weft::condition_variable not_full_, not_empty_;
    std::deque<long> items_;
    size_t cap_;
    bool closed_ = false;
};

int main()
{
    const int producers = 4, consumers = 3;
    const long per_producer = 100000;
    weft::runtime rt;
    bounded_queue q(64);
    std::vector<weft::handle<long>> eaters;
    for (int c = 0; c < consumers; c++)
        eaters.push_back(weft::spawn([&q] {
            long v, sum = 0;
            while (q.pop(v))
                sum += v;
            return sum;
        }));
    {
        weft::group makers;
        for (int p = 0; p < producers; p++)
            makers.run([&q, p, per_producer] {
                for (long i = 0; i < per_producer; i++)
                    q.push(p * per_producer + i);
            });
        makers.wait();
    }
    q.close();
    long total = 0;
    for (auto &h : eaters)
        total += h.join();
    long n = producers * per_producer, expect = n * (n - 1) / 2;
    std::printf("consumed sum %ld (expected %ld) on %d workers\n", total, expect,
                weft_num_workers());
    return total == expect ? 0 : 1;
}
